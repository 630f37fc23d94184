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
from dataclasses import dataclass
from typing import Any

import numpy as np

import pykern as pk

from pykern.autograd.records import reads
from pykern.lang import builtins as bi
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.ops.registry import Aliases, Op, get, register
from pykern.tensor.core import promotion as pr

LN2 = 0.6931471805599453
# Vulkan's bound on atan-like and hyperbolic functions in f32 (about 4e-4 relative; lavapipe's
# asin and acos come near it), what the test matrix holds those ops to
VULKAN_ATAN_RTOL = 5e-4
LN10 = 2.302585092994046
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


# ---------------------------------------------------------------- the declarations


class UnaryOp(Op):
    """A unary op: `name` (for errors and numpy's ufunc names), `fn` its element function,
    `rule` its type rule, `doc` for its tensor function. `bool_ok=False` refuses bool tensors;
    `unsigned` is the element function for unsigned ints where it differs and `constant` a
    predicate's value for non-floats. Its backward is `grad`, a formula of `g` and the tensors
    it reads by name (`x`, `out`); `complex_grad` the formula for complex tensors ("holomorphic":
    the real formula, conjugated: see `pykern.tensor.complex.complex_grads`). For the test
    matrix: `domain`, where its samples lie (default -2..2), `reference`, a numpy function where
    numpy has none of its name, and `f32_rtol`, its f32 accuracy where that is Vulkan's
    (GLSL.std.450's bounds: docs/tensor.md, Precision) rather than a few ULP."""

    def __init__(self, name: str, fn: Func, rule: Callable[[UnaryOp, DType], UnaryPlan],
                 doc: str, *, bool_ok: bool = True, unsigned: Func | None = None,
                 constant: bool = False, grad: Callable[..., Any] | None = None,
                 complex_grad: Callable[..., Any] | str | None = None,
                 aliases: Aliases | None = None, exports: tuple[str, ...] = ("pk", "array_api"),
                 kind: str = "unary", builtin: Any = None, domain: tuple[float, float] | None
                 = None, reference: Callable[..., Any] | None = None,
                 f32_rtol: float | None = None) -> None:
        float_result = rule not in (_predicate, _signbit, _bitwise, _logical)
        super().__init__(name, doc, kind, exports=exports,
                         aliases=aliases if aliases is not None else _aliases(name),
                         types=(rule.__doc__ or "").split("\n")[0],
                         grad=("formula" if grad is not None else
                               "refused" if float_result else "none"),
                         backward=grad, complex_grad=complex_grad is not None, builtin=builtin,
                         samples={k: v for k, v in (("domain", domain), ("f32_rtol", f32_rtol))
                                  if v is not None} or None, reference=reference)
        self.fn, self.rule, self.bool_ok = fn, rule, bool_ok
        self.unsigned, self.constant = unsigned, constant
        self.complex_backward = holomorphic(grad) if complex_grad == HOLOMORPHIC else \
            complex_grad
        self._plans: dict[DType, UnaryPlan] = {}

    def plan(self, d: DType) -> UnaryPlan:
        """How this op runs on a tensor of dtype `d` (TypeError where it does not)."""
        plan = self._plans.get(d)
        if plan is None:
            if d == dt.bool_ and not self.bool_ok:
                raise TypeError(f"{self.name} is not supported for bool tensors" +
                                ("; use ~ or pk.logical_not" if self.name == "negative" else ""))
            plan = self._plans[d] = self.rule(self, d)
        return plan


def _aliases(name: str, numpy: tuple[str, ...] | None = None, torch: str | None = None,
             aten: tuple[str, ...] | None = None, array_api: bool = True) -> Aliases:
    """An elementwise op's names elsewhere: by default its own name in numpy, the array API
    and PyTorch, and `aten::<torch name>`."""
    torch = torch or name
    return Aliases(numpy=(name,) if numpy is None else numpy,
                   array_api=name if array_api else None, torch=(torch,),
                   aten=(f"aten::{torch}",) if aten is None else aten)


def _zero(g: Any) -> Any:
    return g * 0.0  # piecewise constant: a zero gradient, as PyTorch gives


HOLOMORPHIC = "holomorphic"


def holomorphic(formula: Callable[..., Any] | None) -> Callable[..., Any] | None:
    """The complex backward of a holomorphic op from its real formula. pykern follows
    PyTorch's convention: a complex number is a pair of reals, and the gradient of a real loss
    L with respect to z = x + iy is dL/dx + i dL/dy (so `z -= lr * z.grad` descends). For a
    holomorphic f, w = f(z), that makes the gradient of z `g * conj(f'(z))` for the gradient g
    of w: the real formula (g * f'(z)) run on conj(g) and conjugated back."""
    if formula is None:
        return None

    def backward(g: Any, **tensors: Any) -> Any:
        return pk.conj(formula(pk.conj(g), **tensors))
    backward.reads = reads(formula)  # type: ignore[attr-defined]
    return backward


def _abs_grad(g: Any, x: Any) -> Any:
    return g * pk.sign(x)


def _abs_complex(g: Any, x: Any, out: Any) -> Any:
    """d|z|: g * z/|z| (0 at z = 0, as PyTorch)."""
    return g * pk.where(out == 0, 0.0, x / out)


def _sign_complex(g: Any, x: Any, out: Any) -> Any:
    """sgn(z) = z/|z|: (g - Re(conj(g) s) s) / |z| (0 at z = 0), the part of g across s."""
    m = pk.abs(x)
    return pk.where(m == 0, 0.0, (g - pk.real(pk.conj(g) * out) * out) / m)


def _acosh_complex(g: Any, x: Any) -> Any:
    """acosh'(z) = 1 / (sqrt(z - 1) sqrt(z + 1)): for complex z the two roots are not
    sqrt(z*z - 1), whose branch differs left of the imaginary axis."""
    return g / (pk.sqrt(x - 1.0) * pk.sqrt(x + 1.0))


def _relu_grad(g: Any, x: Any) -> Any:
    """d relu(x) · g: g where x > 0, else 0, one fused kernel."""
    return get("relu_backward").function(g, x)  # type: ignore[misc]


def _silu_grad(g: Any, x: Any) -> Any:
    """d silu(x) · g: g · σ(x) (1 + x (1 − σ(x))), one fused kernel."""
    return get("silu_backward").function(g, x)  # type: ignore[misc]


def _gelu_grad(g: Any, x: Any) -> Any:
    """d gelu(x) · g: g · (Φ(x) + x φ(x)), one fused kernel."""
    return get("gelu_backward").function(g, x)  # type: ignore[misc]


_OPS = (
    UnaryOp("negative", negative_f, _same, "-x", bool_ok=False, grad=lambda g: -g,
            complex_grad=HOLOMORPHIC, aliases=_aliases("negative", torch="neg")),
    UnaryOp("positive", copy_f, _same, "+x (a copy)", grad=lambda g: g,
            complex_grad=HOLOMORPHIC),
    UnaryOp("abs", abs_f, _same, "|x|", unsigned=copy_f, grad=_abs_grad,
            complex_grad=_abs_complex, builtin=bi.abs,
            aliases=_aliases("abs", numpy=("abs", "absolute", "fabs"))),
    UnaryOp("square", square_f, _same, "x * x", grad=lambda g, x: g * 2.0 * x,
            complex_grad=HOLOMORPHIC, builtin=bi.square),
    UnaryOp("sign", sign_f, _same, "-1, 0 or 1 (nan stays nan, -0.0 stays -0.0)", bool_ok=False,
            unsigned=sign_unsigned_f, grad=_zero, complex_grad=_sign_complex),
    UnaryOp("relu", relu_f, _same, "max(x, 0) (nan stays nan)", grad=_relu_grad,
            exports=("pk",), aliases=_aliases("relu", numpy=(), array_api=False),
            reference=lambda x: np.maximum(x, 0)),
    UnaryOp("reciprocal", reciprocal_f, _float, "1 / x", grad=lambda g, out: -g * out * out,
            complex_grad=HOLOMORPHIC,
            domain=(0.5, 2.0)),
    UnaryOp("sqrt", sqrt_f, _float, "square root (nan below 0)",
            grad=lambda g, out: g * 0.5 / out, complex_grad=HOLOMORPHIC, builtin=bi.sqrt,
            domain=(0.1, 3.0)),
    UnaryOp("rsqrt", rsqrt_f, _float, "1 / sqrt(x)",
            grad=lambda g, out: g * -0.5 * out * out * out, builtin=bi.rsqrt, exports=("pk",),
            aliases=_aliases("rsqrt", numpy=(), array_api=False),
            domain=(0.1, 3.0), reference=lambda x: 1.0 / np.sqrt(x)),
    UnaryOp("exp", exp_f, _math, "e**x", grad=lambda g, out: g * out, complex_grad=HOLOMORPHIC,
            builtin=bi.exp),
    UnaryOp("exp2", exp2_f, _math, "2**x", grad=lambda g, out: g * out * LN2,
            complex_grad=HOLOMORPHIC, builtin=bi.exp2, exports=("pk",),
            aliases=_aliases("exp2", array_api=False)),
    UnaryOp("expm1", expm1_f, _math, "e**x - 1, accurate near 0",
            grad=lambda g, out: g * (out + 1.0), complex_grad=HOLOMORPHIC, builtin=bi.expm1),
    UnaryOp("log", log_f, _math, "natural logarithm (nan below 0, -inf at 0)",
            grad=lambda g, x: g / x, complex_grad=HOLOMORPHIC, builtin=bi.log,
            domain=(0.1, 3.0)),
    UnaryOp("log2", log2_f, _math, "base-2 logarithm", grad=lambda g, x: g / (x * LN2),
            complex_grad=HOLOMORPHIC, builtin=bi.log2,
            domain=(0.1, 3.0)),
    UnaryOp("log10", log10_f, _math, "base-10 logarithm", grad=lambda g, x: g / (x * LN10),
            complex_grad=HOLOMORPHIC, builtin=bi.log10,
            domain=(0.1, 3.0)),
    UnaryOp("log1p", log1p_f, _math, "log(1 + x), accurate near 0",
            grad=lambda g, x: g / (x + 1.0), complex_grad=HOLOMORPHIC, builtin=bi.log1p,
            domain=(-0.5, 2.0)),
    UnaryOp("sin", sin_f, _math, "sine", grad=lambda g, x: g * pk.cos(x),
            complex_grad=HOLOMORPHIC, builtin=bi.sin),
    UnaryOp("cos", cos_f, _math, "cosine", grad=lambda g, x: -g * pk.sin(x),
            complex_grad=HOLOMORPHIC, builtin=bi.cos),
    UnaryOp("tan", tan_f, _math, "tangent", grad=lambda g, out: g * (1.0 + out * out),
            complex_grad=HOLOMORPHIC, builtin=bi.tan,
            domain=(-1.2, 1.2)),
    UnaryOp("asin", asin_f, _math, "arcsine", grad=lambda g, x: g / pk.sqrt(1.0 - x * x),
            complex_grad=HOLOMORPHIC, builtin=bi.asin,
            aliases=_aliases("asin", numpy=("asin", "arcsin")),
            domain=(-0.9, 0.9),
            f32_rtol=VULKAN_ATAN_RTOL),
    UnaryOp("acos", acos_f, _math, "arccosine", grad=lambda g, x: -g / pk.sqrt(1.0 - x * x),
            complex_grad=HOLOMORPHIC, builtin=bi.acos,
            aliases=_aliases("acos", numpy=("acos", "arccos")),
            domain=(-0.9, 0.9),
            f32_rtol=VULKAN_ATAN_RTOL),
    UnaryOp("atan", atan_f, _math, "arctangent", grad=lambda g, x: g / (1.0 + x * x),
            complex_grad=HOLOMORPHIC, builtin=bi.atan,
            aliases=_aliases("atan", numpy=("atan", "arctan")),
            f32_rtol=VULKAN_ATAN_RTOL),
    UnaryOp("sinh", sinh_f, _math, "hyperbolic sine", grad=lambda g, x: g * pk.cosh(x),
            complex_grad=HOLOMORPHIC, builtin=bi.sinh,
            f32_rtol=VULKAN_ATAN_RTOL),
    UnaryOp("cosh", cosh_f, _math, "hyperbolic cosine", grad=lambda g, x: g * pk.sinh(x),
            complex_grad=HOLOMORPHIC, builtin=bi.cosh,
            f32_rtol=VULKAN_ATAN_RTOL),
    UnaryOp("tanh", tanh_f, _math, "hyperbolic tangent",
            grad=lambda g, out: g * (1.0 - out * out), complex_grad=HOLOMORPHIC,
            builtin=bi.tanh),
    UnaryOp("asinh", asinh_f, _math, "inverse hyperbolic sine",
            grad=lambda g, x: g / pk.sqrt(x * x + 1.0), complex_grad=HOLOMORPHIC,
            builtin=bi.asinh, aliases=_aliases("asinh", numpy=("asinh", "arcsinh")),
            f32_rtol=VULKAN_ATAN_RTOL),
    UnaryOp("acosh", acosh_f, _math, "inverse hyperbolic cosine",
            grad=lambda g, x: g / pk.sqrt(x * x - 1.0), complex_grad=holomorphic(_acosh_complex),
            builtin=bi.acosh, aliases=_aliases("acosh", numpy=("acosh", "arccosh")),
            domain=(1.1, 3.0),
            f32_rtol=VULKAN_ATAN_RTOL),
    UnaryOp("atanh", atanh_f, _math, "inverse hyperbolic tangent",
            grad=lambda g, x: g / (1.0 - x * x), complex_grad=HOLOMORPHIC, builtin=bi.atanh,
            aliases=_aliases("atanh", numpy=("atanh", "arctanh")),
            domain=(-0.9, 0.9),
            f32_rtol=VULKAN_ATAN_RTOL),
    UnaryOp("erf", erf_f, _math, "the error function",
            grad=lambda g, x: g * (2.0 / math.sqrt(math.pi)) * pk.exp(-x * x),
            builtin=bi.erf, exports=("pk",), aliases=_aliases("erf", numpy=(), array_api=False),
            reference=np.vectorize(math.erf)),
    UnaryOp("sigmoid", sigmoid_f, _math, "1 / (1 + e**-x)",
            grad=lambda g, out: g * out * (1.0 - out), exports=("pk",),
            aliases=_aliases("sigmoid", numpy=(), array_api=False),
            reference=lambda x: 1.0 / (1.0 + np.exp(-x))),
    UnaryOp("silu", silu_f, _math, "x * sigmoid(x)", grad=_silu_grad, exports=("pk",),
            aliases=_aliases("silu", numpy=(), array_api=False),
            reference=lambda x: x / (1.0 + np.exp(-x))),
    UnaryOp("gelu", gelu_f, _math, "x * Phi(x), with erf (approximate='tanh': the tanh form)",
            grad=_gelu_grad, exports=("pk",),
            aliases=_aliases("gelu", numpy=(), array_api=False),
            reference=lambda x: 0.5 * x * (1.0 + np.vectorize(math.erf)(x * SQRT1_2))),
    UnaryOp("floor", floor_f, _round, "largest integer <= x", grad=_zero, builtin=bi.floor),
    UnaryOp("ceil", ceil_f, _round, "smallest integer >= x", grad=_zero, builtin=bi.ceil),
    UnaryOp("trunc", trunc_f, _round, "integer part, toward 0", grad=_zero, builtin=bi.trunc),
    UnaryOp("round", round_f, _round, "nearest integer, halves to even", grad=_zero,
            complex_grad=lambda g: g * 0.0, builtin=bi.round,
            aliases=_aliases("round", numpy=("round", "rint"))),
    UnaryOp("isnan", isnan_f, _predicate, "x is nan", builtin=bi.isnan),
    UnaryOp("isinf", isinf_f, _predicate, "x is +-inf", builtin=bi.isinf),
    UnaryOp("isfinite", isfinite_f, _predicate, "x is neither inf nor nan", constant=True),
    UnaryOp("signbit", signbit_f, _signbit, "the sign bit of x is set"),
    UnaryOp("bitwise_invert", invert_f, _bitwise, "~x (logical not for bool)",
            aliases=_aliases("bitwise_invert", numpy=("invert", "bitwise_invert"),
                             torch="bitwise_not")),
    UnaryOp("logical_not", logical_not_f, _logical, "not x"),
)

UNARY: dict[str, UnaryOp] = {register(op).name: op for op in _OPS}
"""Every unary op by name (numpy's ufuncs and the tests look them up; operators do not)."""



def _gelu_tanh_grad(g: Any, x: Any) -> Any:
    """The derivative of 0.5·x·(1 + tanh u), u = √(2/π)·(x + 0.044715·x³):
    0.5·(1 + tanh u) + 0.5·x·(1 - tanh² u)·√(2/π)·(1 + 3·0.044715·x²) (the erf form's, which
    `gelu` declares, is off by up to 1e-3)."""
    t = pk.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
    return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * SQRT_2_OVER_PI
                * (1.0 + 3.0 * 0.044715 * x * x))


# gelu(approximate="tanh"): the same op for errors and typing (not registered: `gelu` is the
# op), another element function and its own backward
GELU_TANH = UnaryOp("gelu", gelu_tanh_f, _math, UNARY["gelu"].doc, exports=(),
                    grad=_gelu_tanh_grad)
