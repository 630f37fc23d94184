"""The table of unary ops: for each, its element function (a `@pk.func` applied to one value of
the compute type inside the generic unary kernel), its type rule, and its name for errors and
numpy's ufuncs. `pykern.tensor.elementwise` runs them; nothing here knows tensors.

A type rule maps the operand dtype to a `UnaryPlan`: the element function to run (an op may
have another one for f64, unsigned integers or bool), the result dtype and the compute dtype,
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
from pykern.tensor import promotion as pr

LN2 = 0.6931471805599453
LOG10_2 = 0.30102999566398120
SQRT1_2 = 0.7071067811865476
SQRT_2_OVER_PI = 0.7978845608028654


# ---------------------------------------------------------------- element functions


@pk.func
def log1p_f(x):
    # 2 atanh(s) with s = x / (2 + x): accurate near 0, where log(1 + x) loses digits
    s = x / (2.0 + x)
    s2 = s * s
    series = s * (2.0 + s2 * (0.6666666666666666 + s2 * (0.4 + s2 * (0.2857142857142857 + s2 * (
        0.2222222222222222 + s2 * (0.18181818181818182 + s2 * 0.15384615384615385))))))
    big = pk.log(pk.select(1.0 + x < 0.0, 0.0, 1.0 + x))
    r = pk.select(builtins.abs(x) < 0.25, series, big)
    return pk.select(x < -1.0, math.nan, r)


@pk.func
def expm1_f(x):
    # Taylor near 0 (where exp(x) - 1 cancels), exp(x) - 1 elsewhere
    p = x * (1.0 + x * (0.5 + x * (0.16666666666666666 + x * (0.041666666666666664 + x * (
        0.008333333333333333 + x * (0.001388888888888889 + x * (0.0001984126984126984 + x * (
            2.48015873015873e-05))))))))
    return pk.select(builtins.abs(x) < 0.25, p, pk.exp(x) - 1.0)


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
def invert_f(x):
    return ~x


@pk.func
def logical_not_f(x):
    return not x


# ---------------------------------------------------------------- type rules


@dataclass(frozen=True)
class UnaryPlan:
    """How one call runs: `fn` over operands converted to `compute`, stored as `result`; or,
    with `fn` None, the result filled with `constant`. `f64` names the pykern.tensor.math64
    version to run instead of `fn` (Vulkan has no 64-bit transcendentals)."""

    fn: Func | None
    result: DType
    compute: DType | None
    constant: bool = False
    f64: str | None = None


def _math(op: UnaryOp, d: DType) -> UnaryPlan:
    """Float result, transcendental: computed in f32 (ints give f32), f64 by math64 where it
    has the op."""
    if d == dt.f64 and op.f64 is not None:
        return UnaryPlan(None, d, d, f64=op.f64)
    return UnaryPlan(op.fn, d if d.is_float else pr.DEFAULT_FLOAT, dt.f32)


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
    `unsigned` is the element function for unsigned ints where it differs, `f64` the name of
    its math64 version and `constant` a predicate's value for non-floats."""

    name: str
    fn: Func
    rule: Callable[[UnaryOp, DType], UnaryPlan]
    doc: str
    bool_ok: bool = True
    unsigned: Func | None = None
    f64: str | None = None
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
    UnaryOp("exp", exp_f, _math, "e**x", f64="exp_d"),
    UnaryOp("exp2", exp2_f, _math, "2**x", f64="exp2_d"),
    UnaryOp("expm1", expm1_f, _math, "e**x - 1, accurate near 0", f64="expm1_d"),
    UnaryOp("log", log_f, _math, "natural logarithm (nan below 0, -inf at 0)", f64="log_d"),
    UnaryOp("log2", log2_f, _math, "base-2 logarithm", f64="log2_d"),
    UnaryOp("log10", log10_f, _math, "base-10 logarithm", f64="log10_d"),
    UnaryOp("log1p", log1p_f, _math, "log(1 + x), accurate near 0", f64="log1p_d"),
    UnaryOp("sin", sin_f, _math, "sine", f64="sin_d"),
    UnaryOp("cos", cos_f, _math, "cosine", f64="cos_d"),
    UnaryOp("tan", tan_f, _math, "tangent", f64="tan_d"),
    UnaryOp("asin", asin_f, _math, "arcsine", f64="asin_d"),
    UnaryOp("acos", acos_f, _math, "arccosine", f64="acos_d"),
    UnaryOp("atan", atan_f, _math, "arctangent", f64="atan_d"),
    UnaryOp("sinh", sinh_f, _math, "hyperbolic sine", f64="sinh_d"),
    UnaryOp("cosh", cosh_f, _math, "hyperbolic cosine", f64="cosh_d"),
    UnaryOp("tanh", tanh_f, _math, "hyperbolic tangent", f64="tanh_d"),
    UnaryOp("asinh", asinh_f, _math, "inverse hyperbolic sine", f64="asinh_d"),
    UnaryOp("acosh", acosh_f, _math, "inverse hyperbolic cosine", f64="acosh_d"),
    UnaryOp("atanh", atanh_f, _math, "inverse hyperbolic tangent", f64="atanh_d"),
    UnaryOp("erf", erf_f, _math, "the error function"),
    UnaryOp("sigmoid", sigmoid_f, _math, "1 / (1 + e**-x)", f64="sigmoid_d"),
    UnaryOp("silu", silu_f, _math, "x * sigmoid(x)", f64="silu_d"),
    UnaryOp("gelu", gelu_f, _math, "x * Phi(x), with erf (approximate='tanh': the tanh form)"),
    UnaryOp("floor", floor_f, _round, "largest integer <= x"),
    UnaryOp("ceil", ceil_f, _round, "smallest integer >= x"),
    UnaryOp("trunc", trunc_f, _round, "integer part, toward 0"),
    UnaryOp("round", round_f, _round, "nearest integer, halves to even"),
    UnaryOp("isnan", isnan_f, _predicate, "x is nan"),
    UnaryOp("isinf", isinf_f, _predicate, "x is +-inf"),
    UnaryOp("isfinite", isfinite_f, _predicate, "x is neither inf nor nan", constant=True),
    UnaryOp("signbit", signbit_f, _predicate, "the sign bit of x is set"),
    UnaryOp("bitwise_invert", invert_f, _bitwise, "~x (logical not for bool)"),
    UnaryOp("logical_not", logical_not_f, _logical, "not x"),
)

UNARY: dict[str, UnaryOp] = {op.name: op for op in _OPS}
"""Every unary op by name (numpy's ufuncs and the tests look them up; operators do not)."""

# gelu(approximate="tanh"): the same op for errors and typing, another element function
GELU_TANH = UnaryOp("gelu", gelu_tanh_f, _math, UNARY["gelu"].doc)

# math ops with an f64 implementation in pykern.tensor.math64 (the rest compute f64 in f32)
F64_UNARY = frozenset(op.name for op in _OPS if op.f64 is not None)
