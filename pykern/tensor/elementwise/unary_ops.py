"""The table of unary ops: for each, its element function (a `@pk.func` applied to one value of
the compute type inside the generic unary kernel), its type rule, and its name for errors and
numpy's ufuncs. `pykern.tensor.elementwise.functions` runs them; nothing here knows tensors.

A type rule maps the operand dtype to a `UnaryPlan`: the element function to run (an op may
have another one for unsigned integers or bool), the result dtype and the compute dtype,
or a constant that fills the result when the dtype alone decides it (`isnan` of integers).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import pykern as pk

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.tensor.core import promotion as pr

LN2 = 0.6931471805599453
LOG10_2 = 0.30102999566398120
SQRT1_2 = 0.7071067811865476
SQRT_2_OVER_PI = 0.7978845608028654


# ---------------------------------------------------------------- element functions


@pk.func
def log1p_f(x):
    # 2 atanh(s) with s = x / (2 + x): accurate near 0, where log(1 + x) loses digits (the
    # series to s**25 is enough for f64)
    s = x / (2.0 + x)
    s2 = s * s
    t = s2 * 0.08 + 0.08695652173913043
    t = t * s2 + 0.09523809523809523
    t = t * s2 + 0.10526315789473684
    t = t * s2 + 0.11764705882352941
    t = t * s2 + 0.13333333333333333
    t = t * s2 + 0.15384615384615385
    t = t * s2 + 0.18181818181818182
    t = t * s2 + 0.2222222222222222
    t = t * s2 + 0.2857142857142857
    t = t * s2 + 0.4
    t = t * s2 + 0.6666666666666666
    t = t * s2 + 2.0
    big = pk.log(pk.select(1.0 + x < 0.0, 0.0, 1.0 + x))
    r = pk.select(builtins.abs(x) < 0.25, s * t, big)
    return pk.select(x < -1.0, math.nan, r)


@pk.func
def expm1_f(x):
    # Taylor to x**17 near 0 (where exp(x) - 1 cancels; enough for f64), exp(x) - 1 elsewhere;
    # x * (1 + ...) keeps -0.0
    p = x * 2.8114572543455206e-15 + 4.779477332387385e-14
    p = p * x + 7.647163731819816e-13
    p = p * x + 1.1470745597729725e-11
    p = p * x + 1.6059043836821613e-10
    p = p * x + 2.08767569878681e-09
    p = p * x + 2.505210838544172e-08
    p = p * x + 2.755731922398589e-07
    p = p * x + 2.7557319223985893e-06
    p = p * x + 2.48015873015873e-05
    p = p * x + 0.0001984126984126984
    p = p * x + 0.001388888888888889
    p = p * x + 0.008333333333333333
    p = p * x + 0.041666666666666664
    p = p * x + 0.16666666666666666
    p = p * x + 0.5
    p = p * x + 1.0
    return pk.select(builtins.abs(x) < 0.5, x * p, pk.exp(x) - 1.0)


@pk.func
def copy_f(x):
    return x


@pk.func
def negative_f(x):
    return -x


@pk.func
def abs_f(x):
    return builtins.abs(x)


@pk.func
def square_f(x):
    return x * x


@pk.func
def reciprocal_f(x):
    return 1.0 / x


@pk.func
def sign_f(x):
    return pk.select(x > 0, 1, pk.select(x < 0, -1, x - x))  # x - x: +0 for ±0, nan for nan


@pk.func
def sign_unsigned_f(x):
    return pk.select(x > 0, 1, x)


@pk.func
def relu_f(x):
    return builtins.max(x, 0)  # numpy's maximum: nan stays nan, -0.0 gives 0.0


@pk.func
def exp_f(x):
    return pk.exp(x)


@pk.func
def exp2_f(x):
    return pk.exp2(x)


@pk.func
def log_f(x):
    # GLSL leaves log of a negative number undefined; numpy gives nan
    return pk.select(x < 0.0, math.nan, pk.log(x))


@pk.func
def log2_f(x):
    return pk.select(x < 0.0, math.nan, pk.log2(x))


@pk.func
def log10_f(x):
    return pk.select(x < 0.0, math.nan, pk.log2(x) * LOG10_2)


@pk.func
def sqrt_f(x):
    return pk.select(x < 0.0, math.nan, pk.sqrt(x))


@pk.func
def rsqrt_f(x):
    return pk.select(x < 0.0, math.nan, pk.rsqrt(x))


@pk.func
def sin_f(x):
    return pk.sin(x)


@pk.func
def cos_f(x):
    return pk.cos(x)


@pk.func
def tan_f(x):
    return pk.tan(x)


@pk.func
def asin_f(x):
    return pk.asin(x)


@pk.func
def acos_f(x):
    return pk.acos(x)


@pk.func
def atan_f(x):
    return pk.atan(x)


@pk.func
def sinh_f(x):
    return pk.sinh(x)


@pk.func
def cosh_f(x):
    return pk.cosh(x)


@pk.func
def tanh_f(x):
    return pk.tanh(x)


@pk.func
def asinh_f(x):
    a = builtins.abs(x)
    big = pk.log(pk.select(a > 1e18, a, 1.0)) + LN2  # a * a would overflow
    small = log1p_f(a + a * a / (1.0 + pk.sqrt(1.0 + a * a)))
    return pk.copysign(pk.select(a > 1e18, big, small), x)


@pk.func
def acosh_f(x):
    t = x - 1.0
    big = pk.log(pk.select(x > 1e18, x, 1.0)) + LN2
    r = pk.select(x > 1e18, big, log1p_f(t + pk.sqrt(builtins.abs(2.0 * t + t * t))))
    return pk.select(x < 1.0, math.nan, r)


@pk.func
def atanh_f(x):
    a = builtins.abs(x)  # on |x|: near -1, 2x / (1 - x) would sit next to -1 and lose digits
    r = pk.copysign(0.5 * log1p_f(2.0 * a / (1.0 - a)), x)
    return pk.select(a > 1.0, math.nan, r)


@pk.func
def erf_f(x):
    return pk.erf(x)


@pk.func
def sigmoid_f(x):
    return 1.0 / (1.0 + pk.exp(-x))


@pk.func
def silu_f(x):
    return x / (1.0 + pk.exp(-x))


@pk.func
def gelu_f(x):
    return 0.5 * x * (1.0 + pk.erf(x * SQRT1_2))


@pk.func
def gelu_tanh_f(x):
    u = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + pk.tanh(u))


@pk.func
def floor_f(x):
    return pk.floor(x)


@pk.func
def ceil_f(x):
    return pk.ceil(x)


@pk.func
def trunc_f(x):
    return pk.trunc(x)


@pk.func
def round_f(x):
    return pk.round(x)


@pk.func
def isnan_f(x):
    return pk.isnan(x)


@pk.func
def isinf_f(x):
    return pk.isinf(x)


@pk.func
def isfinite_f(x):
    return not (pk.isinf(x) or pk.isnan(x))


@pk.func
def signbit_f(x):
    return pk.copysign(1.0, x) < 0.0


@pk.func
def negative_int_f(x):
    return x < 0


@pk.func
def invert_f(x):
    return ~x


@pk.func
def logical_not_f(x):
    return not x


# ---------------------------------------------------------------- type rules


@dataclass(frozen=True)
class UnaryPlan:
    """How one call runs: `fn` over operands converted to `compute`, stored as `result`; or,
    with `fn` None, the result filled with `constant`."""

    fn: Func | None
    result: DType
    compute: DType | None
    constant: bool = False


def _math(op: UnaryOp, d: DType) -> UnaryPlan:
    """Float result, transcendental: computed in f32, f64 for f64 (where the device lacks f64
    math, `pykern.passes.decompose` supplies it); ints give f32."""
    return UnaryPlan(op.fn, d if d.is_float else pr.DEFAULT_FLOAT, pr.compute_float(d))


def _float(op: UnaryOp, d: DType) -> UnaryPlan:
    """Float result, exact in every float type (sqrt, rsqrt, reciprocal)."""
    out = d if d.is_float else pr.DEFAULT_FLOAT
    return UnaryPlan(op.fn, out, pr.compute_dtype(out))


def _same(op: UnaryOp, d: DType) -> UnaryPlan:
    """The operand's dtype; x, |x|, x*x of bools are x, and so is |x| of unsigned ints."""
    if d == dt.bool_ or op.fn is copy_f:
        return UnaryPlan(copy_f, d, d)
    if d.kind == dt.UINT and op.unsigned is not None:
        return UnaryPlan(op.unsigned, d, d)
    return UnaryPlan(op.fn, d, pr.compute_dtype(d))


def _round(op: UnaryOp, d: DType) -> UnaryPlan:
    """Floats rounded; integers are integral already."""
    return UnaryPlan(op.fn if d.is_float else copy_f, d, pr.compute_dtype(d))


def _signbit(op: UnaryOp, d: DType) -> UnaryPlan:
    """The sign bit: of a signed integer `x < 0` (numpy), never set for bool and unsigned."""
    if d.kind == dt.INT:
        return UnaryPlan(negative_int_f, dt.bool_, d)
    return _predicate(op, d)


def _predicate(op: UnaryOp, d: DType) -> UnaryPlan:
    """A bool result; for integers and bools the dtype decides it (`op.constant`)."""
    if not d.is_float:
        return UnaryPlan(None, dt.bool_, None, constant=op.constant)
    return UnaryPlan(op.fn, dt.bool_, pr.compute_dtype(d))


def _bitwise(op: UnaryOp, d: DType) -> UnaryPlan:
    """Integers and bools (for bools, logical not)."""
    if d.is_float:
        raise TypeError(f"{op.name} needs an integer or bool tensor, not {d.name}")
    return UnaryPlan(logical_not_f if d == dt.bool_ else op.fn, d, d)


def _logical(op: UnaryOp, d: DType) -> UnaryPlan:
    """Any dtype, as truth values: a bool result."""
    return UnaryPlan(op.fn, dt.bool_, dt.bool_)


# ---------------------------------------------------------------- the table


@dataclass(frozen=True, eq=False)
class UnaryOp:
    """A unary op: `name` (for errors and numpy's ufunc names), `fn` its element function,
    `rule` its type rule, `doc` for its tensor function. `bool_ok=False` refuses bool tensors;
    `unsigned` is the element function for unsigned ints where it differs and `constant` a
    predicate's value for non-floats."""

    name: str
    fn: Func
    rule: Callable[[UnaryOp, DType], UnaryPlan]
    doc: str
    bool_ok: bool = True
    unsigned: Func | None = None
    constant: bool = False
    _plans: dict[DType, UnaryPlan] = field(default_factory=dict, repr=False)

    def plan(self, d: DType) -> UnaryPlan:
        """How this op runs on a tensor of dtype `d` (TypeError where it does not)."""
        plan = self._plans.get(d)
        if plan is None:
            if d == dt.bool_ and not self.bool_ok:
                raise TypeError(f"{self.name} is not supported for bool tensors" +
                                ("; use ~ or pk.logical_not" if self.name == "negative" else ""))
            plan = self._plans[d] = self.rule(self, d)
        return plan


_OPS = (
    UnaryOp("negative", negative_f, _same, "-x", bool_ok=False),
    UnaryOp("positive", copy_f, _same, "+x (a copy)"),
    UnaryOp("abs", abs_f, _same, "|x|", unsigned=copy_f),
    UnaryOp("square", square_f, _same, "x * x"),
    UnaryOp("sign", sign_f, _same, "-1, 0 or 1 (nan stays nan, -0.0 stays -0.0)", bool_ok=False,
            unsigned=sign_unsigned_f),
    UnaryOp("relu", relu_f, _same, "max(x, 0) (nan stays nan)"),
    UnaryOp("reciprocal", reciprocal_f, _float, "1 / x"),
    UnaryOp("sqrt", sqrt_f, _float, "square root (nan below 0)"),
    UnaryOp("rsqrt", rsqrt_f, _float, "1 / sqrt(x)"),
    UnaryOp("exp", exp_f, _math, "e**x"),
    UnaryOp("exp2", exp2_f, _math, "2**x"),
    UnaryOp("expm1", expm1_f, _math, "e**x - 1, accurate near 0"),
    UnaryOp("log", log_f, _math, "natural logarithm (nan below 0, -inf at 0)"),
    UnaryOp("log2", log2_f, _math, "base-2 logarithm"),
    UnaryOp("log10", log10_f, _math, "base-10 logarithm"),
    UnaryOp("log1p", log1p_f, _math, "log(1 + x), accurate near 0"),
    UnaryOp("sin", sin_f, _math, "sine"),
    UnaryOp("cos", cos_f, _math, "cosine"),
    UnaryOp("tan", tan_f, _math, "tangent"),
    UnaryOp("asin", asin_f, _math, "arcsine"),
    UnaryOp("acos", acos_f, _math, "arccosine"),
    UnaryOp("atan", atan_f, _math, "arctangent"),
    UnaryOp("sinh", sinh_f, _math, "hyperbolic sine"),
    UnaryOp("cosh", cosh_f, _math, "hyperbolic cosine"),
    UnaryOp("tanh", tanh_f, _math, "hyperbolic tangent"),
    UnaryOp("asinh", asinh_f, _math, "inverse hyperbolic sine"),
    UnaryOp("acosh", acosh_f, _math, "inverse hyperbolic cosine"),
    UnaryOp("atanh", atanh_f, _math, "inverse hyperbolic tangent"),
    UnaryOp("erf", erf_f, _math, "the error function"),
    UnaryOp("sigmoid", sigmoid_f, _math, "1 / (1 + e**-x)"),
    UnaryOp("silu", silu_f, _math, "x * sigmoid(x)"),
    UnaryOp("gelu", gelu_f, _math, "x * Phi(x), with erf (approximate='tanh': the tanh form)"),
    UnaryOp("floor", floor_f, _round, "largest integer <= x"),
    UnaryOp("ceil", ceil_f, _round, "smallest integer >= x"),
    UnaryOp("trunc", trunc_f, _round, "integer part, toward 0"),
    UnaryOp("round", round_f, _round, "nearest integer, halves to even"),
    UnaryOp("isnan", isnan_f, _predicate, "x is nan"),
    UnaryOp("isinf", isinf_f, _predicate, "x is +-inf"),
    UnaryOp("isfinite", isfinite_f, _predicate, "x is neither inf nor nan", constant=True),
    UnaryOp("signbit", signbit_f, _signbit, "the sign bit of x is set"),
    UnaryOp("bitwise_invert", invert_f, _bitwise, "~x (logical not for bool)"),
    UnaryOp("logical_not", logical_not_f, _logical, "not x"),
)

UNARY: dict[str, UnaryOp] = {op.name: op for op in _OPS}
"""Every unary op by name (numpy's ufuncs and the tests look them up; operators do not)."""

# gelu(approximate="tanh"): the same op for errors and typing, another element function
GELU_TANH = UnaryOp("gelu", gelu_tanh_f, _math, UNARY["gelu"].doc)
