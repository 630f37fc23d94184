"""Elementwise operations: three generic `@pk.kernel`s (unary, binary, ternary), specialised per
compute dtype, operand dtypes, op and layout.

Each kernel is made by a factory closed over the compute dtype `CT` (the type the operands are
converted to before the op; f16 computes in f32, f64 in f64 — where the device has no 64-bit
transcendental functions, `pykern.passes.decompose` supplies them). The op is a `pk.constexpr`
string: the device functions `unary_op`/`binary_op`/`ternary_op` test it in compile-time `if`s,
so each variant contains only its own op. `nd` (constexpr 1 or 4) picks flat indexing — the
fast path for contiguous operands, which `strided.plan` reduces to 1-D — or 4-D strided
indexing, where broadcast operands have stride 0. Python scalars become one-element constant
tensors broadcast with stride 0, so `t + 2.0` runs the same variant as `t + u`.
"""

from __future__ import annotations

import builtins
import functools
import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import pykern as pk

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.runtime import get_device
from pykern.tensor.tensor import Tensor, asarray, empty
from pykern.tensor import promotion as pr
from pykern.tensor import strided

LN2 = 0.6931471805599453
LOG10_2 = 0.30102999566398120
SQRT1_2 = 0.7071067811865476
SQRT_2_OVER_PI = 0.7978845608028654

# ---------------------------------------------------------------- the ops, as device functions


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
def log_f(x):
    # GLSL leaves log of a negative number undefined; numpy gives nan
    return pk.select(x < 0.0, math.nan, pk.log(x))


@pk.func
def sqrt_f(x):
    return pk.select(x < 0.0, math.nan, pk.sqrt(x))


@pk.func
def unary_op(x, op):
    """`op` applied to `x` (already of the compute type)."""
    if op == "copy":
        return x
    elif op == "negative":
        return -x
    elif op == "abs":
        return builtins.abs(x)
    elif op == "square":
        return x * x
    elif op == "reciprocal":
        return 1.0 / x
    elif op == "sign":
        return pk.select(x > 0, 1, pk.select(x < 0, -1, x - x))  # x - x: +0 for ±0, nan for nan
    elif op == "sign_unsigned":
        return pk.select(x > 0, 1, x)
    elif op == "relu":
        return builtins.max(x, 0)  # numpy's maximum: nan stays nan, -0.0 gives 0.0
    elif op == "exp":
        return pk.exp(x)
    elif op == "exp2":
        return pk.exp2(x)
    elif op == "expm1":
        return expm1_f(x)
    elif op == "log":
        return log_f(x)
    elif op == "log2":
        return pk.select(x < 0.0, math.nan, pk.log2(x))
    elif op == "log10":
        return pk.select(x < 0.0, math.nan, pk.log2(x) * LOG10_2)
    elif op == "log1p":
        return log1p_f(x)
    elif op == "sqrt":
        return sqrt_f(x)
    elif op == "rsqrt":
        return pk.select(x < 0.0, math.nan, pk.rsqrt(x))
    elif op == "sin":
        return pk.sin(x)
    elif op == "cos":
        return pk.cos(x)
    elif op == "tan":
        return pk.tan(x)
    elif op == "asin":
        return pk.asin(x)
    elif op == "acos":
        return pk.acos(x)
    elif op == "atan":
        return pk.atan(x)
    elif op == "sinh":
        return pk.sinh(x)
    elif op == "cosh":
        return pk.cosh(x)
    elif op == "tanh":
        return pk.tanh(x)
    elif op == "asinh":
        a = builtins.abs(x)
        big = pk.log(pk.select(a > 1e18, a, 1.0)) + LN2  # a * a would overflow
        small = log1p_f(a + a * a / (1.0 + pk.sqrt(1.0 + a * a)))
        return pk.copysign(pk.select(a > 1e18, big, small), x)
    elif op == "acosh":
        t = x - 1.0
        big = pk.log(pk.select(x > 1e18, x, 1.0)) + LN2
        r = pk.select(x > 1e18, big, log1p_f(t + pk.sqrt(builtins.abs(2.0 * t + t * t))))
        return pk.select(x < 1.0, math.nan, r)
    elif op == "atanh":
        a = builtins.abs(x)  # on |x|: near -1, 2x / (1 - x) would sit next to -1 and lose digits
        r = pk.copysign(0.5 * log1p_f(2.0 * a / (1.0 - a)), x)
        return pk.select(a > 1.0, math.nan, r)
    elif op == "erf":
        return pk.erf(x)
    elif op == "sigmoid":
        return 1.0 / (1.0 + pk.exp(-x))
    elif op == "silu":
        return x / (1.0 + pk.exp(-x))
    elif op == "gelu":
        return 0.5 * x * (1.0 + pk.erf(x * SQRT1_2))
    elif op == "gelu_tanh":
        u = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + pk.tanh(u))
    elif op == "floor":
        return pk.floor(x)
    elif op == "ceil":
        return pk.ceil(x)
    elif op == "trunc":
        return pk.trunc(x)
    elif op == "round":
        return pk.round(x)
    elif op == "isnan":
        return pk.isnan(x)
    elif op == "isinf":
        return pk.isinf(x)
    elif op == "isfinite":
        return not (pk.isinf(x) or pk.isnan(x))
    elif op == "signbit":
        return pk.copysign(1.0, x) < 0.0
    elif op == "invert":
        return ~x
    else:  # "logical_not"
        return not x


@pk.func
def binary_op(x, y, op):
    """`op` applied to `x` and `y` (both of the compute type)."""
    if op == "add":
        return x + y
    elif op == "subtract":
        return x - y
    elif op == "multiply":
        return x * y
    elif op == "divide":
        return x / y
    elif op == "floor_divide":
        return x // y
    elif op == "remainder":
        return x % y
    elif op == "pow":
        return x ** y
    elif op == "maximum":
        return builtins.max(x, y)  # the kernel max and min are numpy's (nan propagates)
    elif op == "minimum":
        return builtins.min(x, y)
    elif op == "equal":
        return x == y
    elif op == "not_equal":
        return x != y
    elif op == "less":
        return x < y
    elif op == "less_equal":
        return x <= y
    elif op == "greater":
        return x > y
    elif op == "greater_equal":
        return x >= y
    elif op == "bitwise_and":
        return x & y
    elif op == "bitwise_or":
        return x | y
    elif op == "bitwise_xor":
        return x ^ y
    elif op == "bitwise_left_shift":
        return x << y
    elif op == "bitwise_right_shift":
        return x >> y
    elif op == "logical_and":
        return x and y
    elif op == "logical_or":
        return x or y
    elif op == "logical_xor":
        return x != y
    elif op == "atan2":
        return pk.atan2(x, y)
    elif op == "copysign":
        return pk.copysign(x, y)
    elif op == "hypot":
        ax = builtins.abs(x)
        ay = builtins.abs(y)
        m = pk.select(ax > ay, ax, ay)
        q = pk.select(ax > ay, ay, ax) / pk.select(m == 0.0, 1.0, m)
        r = pk.select(x != x or y != y, x + y, m * pk.sqrt(1.0 + q * q))
        return pk.select(pk.isinf(x) or pk.isinf(y), math.inf, r)
    else:  # "logaddexp"
        d = x - y
        m = pk.select(x > y, x, y)
        return pk.select(d != d, x + y, m + log1p_f(pk.exp(-builtins.abs(d))))


@pk.func
def ternary_op(x, y, z, op):
    if op == "where":
        return pk.select(x, y, z)
    else:  # "clip"
        return pk.clamp(x, y, z)  # numpy's minimum(maximum(x, lo), hi)


# ---------------------------------------------------------------- the generic kernels


@functools.cache
def unary_kernel(ct: DType) -> pk.Kernel:
    CT = ct  # noqa: N806  (a type, as the kernel body uses it)

    @pk.kernel
    def unary(x: pk.Array, out: pk.Array, op: pk.constexpr, nd: pk.constexpr):
        i = pk.global_id(0)
        if nd == 1:
            out[i] = unary_op(CT(x[i]), op)
        else:
            n3 = out.shape[3]
            n2 = out.shape[2]
            n1 = out.shape[1]
            i3 = i % n3
            q = i // n3
            i2 = q % n2
            q = q // n2
            i1 = q % n1
            i0 = q // n1
            out[i0, i1, i2, i3] = unary_op(CT(x[i0, i1, i2, i3]), op)

    return unary


@functools.cache
def binary_kernel(ct: DType) -> pk.Kernel:
    CT = ct  # noqa: N806

    @pk.kernel
    def binary(a: pk.Array, b: pk.Array, out: pk.Array, op: pk.constexpr, nd: pk.constexpr):
        i = pk.global_id(0)
        if nd == 1:
            out[i] = binary_op(CT(a[i]), CT(b[i]), op)
        else:
            n3 = out.shape[3]
            n2 = out.shape[2]
            n1 = out.shape[1]
            i3 = i % n3
            q = i // n3
            i2 = q % n2
            q = q // n2
            i1 = q % n1
            i0 = q // n1
            out[i0, i1, i2, i3] = binary_op(CT(a[i0, i1, i2, i3]), CT(b[i0, i1, i2, i3]), op)

    return binary


@functools.cache
def ternary_kernel(ct: DType) -> pk.Kernel:
    CT = ct  # noqa: N806

    @pk.kernel
    def ternary(a: pk.Array, b: pk.Array, c: pk.Array, out: pk.Array, op: pk.constexpr,
                nd: pk.constexpr):
        i = pk.global_id(0)
        if nd == 1:
            if op == "where":
                va = pk.bool_(a[i])
            else:
                va = CT(a[i])
            out[i] = ternary_op(va, CT(b[i]), CT(c[i]), op)
        else:
            n3 = out.shape[3]
            n2 = out.shape[2]
            n1 = out.shape[1]
            i3 = i % n3
            q = i // n3
            i2 = q % n2
            q = q // n2
            i1 = q % n1
            i0 = q // n1
            if op == "where":
                va = pk.bool_(a[i0, i1, i2, i3])
            else:
                va = CT(a[i0, i1, i2, i3])
            out[i0, i1, i2, i3] = ternary_op(va, CT(b[i0, i1, i2, i3]), CT(c[i0, i1, i2, i3]), op)

    return ternary


KERNELS = {1: unary_kernel, 2: binary_kernel, 3: ternary_kernel}


def launch(op: str, ct: DType, inputs: list[Tensor], out: Tensor) -> None:
    """Runs `op` over `inputs` (views of exactly `out.shape`, broadcast ones with stride 0)
    into `out`, converting the operands to `ct` first."""
    for i, t in enumerate(inputs):
        if strided.may_overlap(out, t) and not strided.same_elements(out, t):
            inputs[i] = t.copy()  # out overwrites what a later invocation would read
    kernel = KERNELS[len(inputs)](ct)
    for job in strided.plan(out.shape, [*inputs, out]):
        kernel[job.n](*job.views, op, job.nd)


# ---------------------------------------------------------------- operands


_CONSTANTS: OrderedDict[tuple, Tensor] = OrderedDict()
_CONSTANTS_MAX = 512


def constant(value: object, dtype: DType) -> Tensor:
    """A cached one-element tensor holding `value` converted to `dtype` (never handed to users,
    so never written)."""
    arr = np.asarray(value).astype(dtype.numpy)
    key = (get_device(), dtype, arr.tobytes())
    t = _CONSTANTS.get(key)
    if t is None:
        t = asarray(arr.reshape(1))
        _CONSTANTS[key] = t
        if len(_CONSTANTS) > _CONSTANTS_MAX:
            _CONSTANTS.popitem(last=False)
    else:
        _CONSTANTS.move_to_end(key)
    return Tensor(t.buffer, (), dtype, (), t.offset)


def as_tensor(x: object) -> Tensor:
    """A tensor operand from a tensor, numpy array/scalar, (nested) list or Python scalar (a
    0-d tensor of pykern's default dtype for it: bool_, i32, f32)."""
    if isinstance(x, Tensor):
        return x
    if pr.is_python_scalar(x) or isinstance(x, (np.ndarray, np.generic, list, tuple)) \
            or hasattr(x, "__array__") or hasattr(x, "__dlpack__"):
        return asarray(x)
    raise TypeError(f"expected a pk.Tensor, array or number, got {type(x).__name__}")


def _dtype_name(x: object) -> str:
    d = pr.operand_dtype(x)
    return d.name if d is not None else f"Python {type(x).__name__}"


def compute_dtype(dtype: DType) -> DType:
    """The type arithmetic on `dtype` runs in: f16 widens to f32 (rounding once at the store
    gives numpy's f16 results)."""
    return dt.f32 if dtype == dt.f16 else dtype


def math_dtype(dtype: DType) -> DType:
    """The type transcendental functions run in: f64 for f64 (where the device lacks them in
    64 bits, `pykern.passes.decompose` supplies them), f32 for every other type."""
    return dt.f64 if dtype == dt.f64 else dt.f32


# ---------------------------------------------------------------- unary ops


@dataclass(frozen=True)
class UnarySpec:
    """How a unary op types: `kind` is
    'math' (float result, transcendental: computed in f32, or f64 for f64; ints give f32),
    'float' (float result, exact in every float type: sqrt, rsqrt, reciprocal),
    'same' (same dtype), 'round' (floats; identity on ints), 'pred' (bool result),
    'bitwise' (ints and bools), 'logical' (any dtype, as truth values)."""

    kind: str
    bool_ok: bool = True
    doc: str = ""


UNARY: dict[str, UnarySpec] = {
    "negative": UnarySpec("same", False, "-x"),
    "positive": UnarySpec("same", True, "+x (a copy)"),
    "abs": UnarySpec("same", True, "|x|"),
    "square": UnarySpec("same", True, "x * x"),
    "sign": UnarySpec("same", False, "-1, 0 or 1 (nan stays nan, -0.0 stays -0.0)"),
    "relu": UnarySpec("same", True, "max(x, 0) (nan stays nan)"),
    "reciprocal": UnarySpec("float", True, "1 / x"),
    "sqrt": UnarySpec("float", True, "square root (nan below 0)"),
    "rsqrt": UnarySpec("float", True, "1 / sqrt(x)"),
    "exp": UnarySpec("math", True, "e**x"),
    "exp2": UnarySpec("math", True, "2**x"),
    "expm1": UnarySpec("math", True, "e**x - 1, accurate near 0"),
    "log": UnarySpec("math", True, "natural logarithm (nan below 0, -inf at 0)"),
    "log2": UnarySpec("math", True, "base-2 logarithm"),
    "log10": UnarySpec("math", True, "base-10 logarithm"),
    "log1p": UnarySpec("math", True, "log(1 + x), accurate near 0"),
    "sin": UnarySpec("math", True, "sine"),
    "cos": UnarySpec("math", True, "cosine"),
    "tan": UnarySpec("math", True, "tangent"),
    "asin": UnarySpec("math", True, "arcsine"),
    "acos": UnarySpec("math", True, "arccosine"),
    "atan": UnarySpec("math", True, "arctangent"),
    "sinh": UnarySpec("math", True, "hyperbolic sine"),
    "cosh": UnarySpec("math", True, "hyperbolic cosine"),
    "tanh": UnarySpec("math", True, "hyperbolic tangent"),
    "asinh": UnarySpec("math", True, "inverse hyperbolic sine"),
    "acosh": UnarySpec("math", True, "inverse hyperbolic cosine"),
    "atanh": UnarySpec("math", True, "inverse hyperbolic tangent"),
    "erf": UnarySpec("math", True, "the error function"),
    "sigmoid": UnarySpec("math", True, "1 / (1 + e**-x)"),
    "silu": UnarySpec("math", True, "x * sigmoid(x)"),
    "gelu": UnarySpec("math", True, "x * Phi(x), with erf (approximate='tanh': the tanh form)"),
    "floor": UnarySpec("round", True, "largest integer <= x"),
    "ceil": UnarySpec("round", True, "smallest integer >= x"),
    "trunc": UnarySpec("round", True, "integer part, toward 0"),
    "round": UnarySpec("round", True, "nearest integer, halves to even"),
    "isnan": UnarySpec("pred", True, "x is nan"),
    "isinf": UnarySpec("pred", True, "x is +-inf"),
    "isfinite": UnarySpec("pred", True, "x is neither inf nor nan"),
    "signbit": UnarySpec("pred", True, "the sign bit of x is set"),
    "bitwise_invert": UnarySpec("bitwise", True, "~x (logical not for bool)"),
    "logical_not": UnarySpec("logical", True, "not x"),
}


def _unary_plan(name: str, d: DType) -> tuple[str, DType, DType | None]:
    """(kernel op, result dtype, compute dtype); compute dtype None means 'fill with the
    constant the op name gives' for ops whose answer the dtype alone decides."""
    spec = UNARY[name]
    op = name
    if d == dt.bool_ and not spec.bool_ok:
        raise TypeError(f"{name} is not supported for bool tensors" +
                        ("; use ~ or pk.logical_not" if name == "negative" else ""))
    if spec.kind == "math":
        return op, (d if d.is_float else pr.DEFAULT_FLOAT), math_dtype(d)
    if spec.kind == "float":
        out = d if d.is_float else pr.DEFAULT_FLOAT
        return op, out, compute_dtype(out)
    if spec.kind == "same":
        if d == dt.bool_ or (d.kind == dt.UINT and name == "abs") or name == "positive":
            return "copy", d, d  # x, |x|, x*x of bools and |x| of unsigned ints are x
        if name == "sign" and d.kind == dt.UINT:
            op = "sign_unsigned"
        return op, d, compute_dtype(d)
    if spec.kind == "round":
        return (op if d.is_float else "copy"), d, compute_dtype(d)
    if spec.kind == "pred":
        if not d.is_float:
            return ("true" if name == "isfinite" else "false"), dt.bool_, None
        return op, dt.bool_, compute_dtype(d)
    if spec.kind == "bitwise":
        if d.is_float:
            raise TypeError(f"{name} needs an integer or bool tensor, not {d.name}")
        return ("logical_not" if d == dt.bool_ else "invert"), d, d
    return op, dt.bool_, dt.bool_  # logical


def unary(name: str, x: object, out: Tensor | None = None, *, op: str | None = None
          ) -> Tensor:
    """Runs the unary op `name` (a key of UNARY) on `x`."""
    x = as_tensor(x)
    kop, rdtype, ct = _unary_plan(name, x.dtype)
    if op is not None:
        kop = op
    out = _output(out, x.shape, rdtype, name)
    if ct is None:
        from pykern.tensor.creation import fill
        fill(out, kop == "true")
        return out
    launch(kop, ct, [x], out)
    return out


def _output(out: Tensor | None, shape: tuple[int, ...], dtype: DType, name: str) -> Tensor:
    if out is None:
        return empty(shape, dtype)
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}: out must be a pk.Tensor, not {type(out).__name__}")
    if out.shape != shape:
        raise ValueError(f"{name}: the result has shape {shape}, out has {out.shape}")
    if not pr.same_kind(dtype, out.dtype):
        raise TypeError(f"{name}: cannot store a {dtype.name} result into a {out.dtype.name} "
                        "tensor (numpy's same_kind casting rule)")
    if strided.has_internal_overlap(out):
        raise ValueError(f"{name}: cannot write into a broadcast view (several indices share "
                         "one element); make it contiguous() first")
    return out


# ---------------------------------------------------------------- binary ops


BINARY_KINDS = {
    "add": "arith", "subtract": "arith", "multiply": "arith", "floor_divide": "arith",
    "remainder": "arith", "pow": "arith", "maximum": "arith", "minimum": "arith",
    "divide": "divide",
    "equal": "compare", "not_equal": "compare", "less": "compare", "less_equal": "compare",
    "greater": "compare", "greater_equal": "compare",
    "bitwise_and": "bitwise", "bitwise_or": "bitwise", "bitwise_xor": "bitwise",
    "bitwise_left_shift": "shift", "bitwise_right_shift": "shift",
    "atan2": "floatmath", "logaddexp": "floatmath", "hypot": "float", "copysign": "float",
    "logical_and": "logical", "logical_or": "logical", "logical_xor": "logical",
}
# bool operands: numpy's meaning where it has one
BOOL_ARITH = {"add": "logical_or", "multiply": "logical_and", "maximum": "logical_or",
              "minimum": "logical_and"}


def _binary_plan(name: str, p: DType) -> tuple[str, DType, DType]:
    """(kernel op, result dtype, compute dtype) for operands promoted to `p`."""
    kind = BINARY_KINDS[name]
    if kind == "arith":
        if p == dt.bool_:
            if name not in BOOL_ARITH:
                raise TypeError(f"{name} is not supported for bool tensors; convert with "
                                ".astype() first")
            return BOOL_ARITH[name], p, p
        return name, p, compute_dtype(p)
    if kind == "divide":
        out = p if p.is_float else pr.DEFAULT_FLOAT
        return name, out, compute_dtype(out)
    if kind == "compare":
        return name, dt.bool_, compute_dtype(p)
    if kind == "bitwise":
        if p.is_float:
            raise TypeError(f"{name} needs integer or bool operands, not {p.name}")
        return name, p, p
    if kind == "shift":
        if not p.is_int:
            raise TypeError(f"{name} needs integer operands, not {p.name}")
        return name, p, p
    if kind in ("floatmath", "float"):
        out = p if p.is_float else pr.DEFAULT_FLOAT
        return name, out, (math_dtype(out) if kind == "floatmath" else compute_dtype(out))
    return name, dt.bool_, dt.bool_  # logical


def binary(name: str, a: object, b: object, out: Tensor | None = None) -> Tensor:
    """Runs the binary op `name` on `a` and `b` with broadcasting and type promotion; with
    `out`, writes there (in-place operators pass the left operand)."""
    if pr.is_python_scalar(a) and pr.is_python_scalar(b):
        a = asarray(a)  # two Python scalars: the first at its default dtype
    a_scalar, b_scalar = pr.is_python_scalar(a), pr.is_python_scalar(b)
    if not a_scalar:
        a = as_tensor(a)
    if not b_scalar:
        b = as_tensor(b)
    if a_scalar:
        p = pr.dtype_with_scalar(b.dtype, a)  # type: ignore[union-attr]
    elif b_scalar:
        p = pr.dtype_with_scalar(a.dtype, b)  # type: ignore[union-attr]
    else:
        p = pr.promote_types(a.dtype, b.dtype)  # type: ignore[union-attr]
    special = _scalar_shortcut(name, a, b, p, out)
    if special is None:
        special = _out_of_range_comparison(name, a, b, p, out)
    if special is not None:
        return special
    kop, rdtype, ct = _binary_plan(name, p)
    ta = _operand(a, p, name)
    tb = _operand(b, p, name)
    shape = strided.broadcast_shapes(ta.shape, tb.shape)
    out = _output(out, shape, rdtype, name)
    launch(kop, ct, [ta.broadcast_to(shape), tb.broadcast_to(shape)], out)
    return out


def _operand(x: object, p: DType, name: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    pr.check_number(x)
    if isinstance(x, int) and not isinstance(x, bool) and p.is_int:
        pr.check_scalar_fits(x, p)
    return constant(x, p)


def _scalar_shortcut(name: str, a: object, b: object, p: DType, out: Tensor | None
                     ) -> Tensor | None:
    """numpy's fast paths for `x ** scalar` (also exact in f64, which has no pow on Vulkan):
    ** 2 squares, ** 0.5 is sqrt, ** 1 copies, ** -1 is the reciprocal, ** 0 gives ones.
    Integers to negative integer powers raise ValueError, as in numpy."""
    if name != "pow" or not pr.is_python_scalar(b) or not isinstance(a, Tensor) or \
            p == dt.bool_:
        return None
    if p.is_int and isinstance(b, int) and b < 0:
        raise ValueError("integers to negative integer powers are not allowed")
    x = a if a.dtype == p else astype(a, p)
    if b == 2:
        return unary("square", x, out)
    if b == 1:
        return unary("positive", x, out)
    if p.is_float and b == 0.5:
        return unary("sqrt", x, out)
    if p.is_float and b == -1:
        return unary("reciprocal", x, out)
    if b == 0:
        res = _output(out, x.shape, p, name)
        from pykern.tensor.creation import fill
        fill(res, 1)
        return res
    return None


_FLIPPED = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
            "greater_equal": "less_equal", "equal": "equal", "not_equal": "not_equal"}


def _out_of_range_comparison(name: str, a: object, b: object, p: DType, out: Tensor | None
                             ) -> Tensor | None:
    """`i8_tensor < 1000`: an int scalar beyond the integer dtype's range compares the same
    with every element (numpy 2 allows this for comparisons only), so the result is a fill."""
    if BINARY_KINDS.get(name) != "compare" or not p.is_int:
        return None
    if pr.is_python_scalar(b) and isinstance(a, Tensor):
        tensor, value, op = a, b, name
    elif pr.is_python_scalar(a) and isinstance(b, Tensor):
        tensor, value, op = b, a, _FLIPPED[name]
    else:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    info = np.iinfo(p.numpy)
    if info.min <= value <= info.max:
        return None
    above = value > info.max  # every element is below the scalar
    truth = {"equal": False, "not_equal": True, "less": above, "less_equal": above,
             "greater": not above, "greater_equal": not above}[op]
    res = _output(out, tensor.shape, dt.bool_, name)
    from pykern.tensor.creation import fill
    fill(res, truth)
    return res


# ---------------------------------------------------------------- ternary ops


def where(condition: object, x1: object, x2: object) -> Tensor:
    """Elements of `x1` where `condition` is true, else of `x2` (broadcast together; the result
    dtype promotes `x1` and `x2`)."""
    c = as_tensor(condition)
    p = pr.result_type(*(v for v in (x1, x2)))
    t1, t2 = _operand(as_strong(x1), p, "where"), _operand(as_strong(x2), p, "where")
    shape = strided.broadcast_shapes(c.shape, t1.shape, t2.shape)
    out = empty(shape, p)
    launch("where", compute_dtype(p), [c.broadcast_to(shape), t1.broadcast_to(shape),
                                       t2.broadcast_to(shape)], out)
    return out


def as_strong(x: object) -> object:
    return x if pr.is_python_scalar(x) else as_tensor(x)


def clip(x: object, min: object = None, max: object = None) -> Tensor:  # noqa: A002
    """`x` limited to [min, max] (either may be None; tensors broadcast). nan stays nan; where
    min > max the result is max, as numpy."""
    x = as_tensor(x)
    if min is None and max is None:
        return x.copy()
    if min is None:
        return binary("minimum", x, max)
    if max is None:
        return binary("maximum", x, min)
    p = pr.result_type(x, min, max)
    if p == dt.bool_:
        raise TypeError("clip is not supported for bool tensors")
    lo = _operand(as_strong(min), p, "clip")
    hi = _operand(as_strong(max), p, "clip")
    shape = strided.broadcast_shapes(x.shape, lo.shape, hi.shape)
    out = empty(shape, p)
    launch("clip", compute_dtype(p), [x.broadcast_to(shape), lo.broadcast_to(shape),
                                      hi.broadcast_to(shape)], out)
    return out


# ---------------------------------------------------------------- copies and assignment


def astype(x: object, dtype: object, copy: bool = True) -> Tensor:
    """`x` converted to `dtype` in a new row-major tensor (`copy=False`: `x` itself when the
    dtype already matches). Float to int truncates toward 0 (out-of-range values saturate,
    nan gives 0); to bool is `x != 0`."""
    x = as_tensor(x)
    d = dt.as_dtype(dtype)
    if d == x.dtype and not copy:
        return x
    out = empty(x.shape, d)
    launch("copy", d, [x], out)
    return out


def assign(target: Tensor, value: object) -> None:
    """`target[...] = value`: a scalar or a tensor broadcast to `target`'s shape, converted to
    its dtype (numpy's unsafe casting, as numpy's setitem)."""
    if strided.has_internal_overlap(target):
        raise ValueError("cannot assign into a broadcast view (several indices share one "
                         "element)")
    if pr.is_python_scalar(value):
        pr.check_number(value)
        if target.dtype.is_int and isinstance(value, int):
            pr.check_scalar_fits(value, target.dtype)
        src = constant(value, target.dtype)
    else:
        src = as_tensor(value)
    try:
        src = src.broadcast_to(target.shape)
    except ValueError:
        raise ValueError(f"could not broadcast a value of shape {src.shape} into the indexed "
                         f"shape {target.shape}") from None
    launch("copy", target.dtype, [src], target)


# ---------------------------------------------------------------- the public functions


def _unary_function(name: str) -> Callable[..., Tensor]:
    spec = UNARY[name]

    def fn(x: object, /, *, out: Tensor | None = None) -> Tensor:
        return unary(name, x, out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {spec.doc} (a new tensor, or `out`)."
    return fn


def _binary_function(name: str) -> Callable[..., Tensor]:
    def fn(x1: object, x2: object, /, *, out: Tensor | None = None) -> Tensor:
        return binary(name, x1, x2, out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise {name} of two tensors (or a tensor and a scalar) with numpy "
                  "broadcasting and pykern's type promotion (a new tensor, or `out`).")
    return fn


negative = _unary_function("negative")
positive = _unary_function("positive")
abs = _unary_function("abs")  # noqa: A001
square = _unary_function("square")
sign = _unary_function("sign")
relu = _unary_function("relu")
reciprocal = _unary_function("reciprocal")
sqrt = _unary_function("sqrt")
rsqrt = _unary_function("rsqrt")
exp = _unary_function("exp")
exp2 = _unary_function("exp2")
expm1 = _unary_function("expm1")
log = _unary_function("log")
log2 = _unary_function("log2")
log10 = _unary_function("log10")
log1p = _unary_function("log1p")
sin = _unary_function("sin")
cos = _unary_function("cos")
tan = _unary_function("tan")
asin = _unary_function("asin")
acos = _unary_function("acos")
atan = _unary_function("atan")
sinh = _unary_function("sinh")
cosh = _unary_function("cosh")
tanh = _unary_function("tanh")
asinh = _unary_function("asinh")
acosh = _unary_function("acosh")
atanh = _unary_function("atanh")
erf = _unary_function("erf")
sigmoid = _unary_function("sigmoid")
silu = _unary_function("silu")
floor = _unary_function("floor")
ceil = _unary_function("ceil")
trunc = _unary_function("trunc")
round = _unary_function("round")  # noqa: A001
isnan = _unary_function("isnan")
isinf = _unary_function("isinf")
isfinite = _unary_function("isfinite")
signbit = _unary_function("signbit")
bitwise_invert = _unary_function("bitwise_invert")
logical_not = _unary_function("logical_not")


def gelu(x: object, /, *, approximate: str = "none", out: Tensor | None = None) -> Tensor:
    """GELU: x * Phi(x) with the exact erf form, or approximate='tanh' for
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', not {approximate!r}")
    return unary("gelu", x, out, op="gelu" if approximate == "none" else "gelu_tanh")


add = _binary_function("add")
subtract = _binary_function("subtract")
multiply = _binary_function("multiply")
divide = _binary_function("divide")
floor_divide = _binary_function("floor_divide")
remainder = _binary_function("remainder")
pow = _binary_function("pow")  # noqa: A001
maximum = _binary_function("maximum")
minimum = _binary_function("minimum")
equal = _binary_function("equal")
not_equal = _binary_function("not_equal")
less = _binary_function("less")
less_equal = _binary_function("less_equal")
greater = _binary_function("greater")
greater_equal = _binary_function("greater_equal")
bitwise_and = _binary_function("bitwise_and")
bitwise_or = _binary_function("bitwise_or")
bitwise_xor = _binary_function("bitwise_xor")
bitwise_left_shift = _binary_function("bitwise_left_shift")
bitwise_right_shift = _binary_function("bitwise_right_shift")
atan2 = _binary_function("atan2")
hypot = _binary_function("hypot")
copysign = _binary_function("copysign")
logaddexp = _binary_function("logaddexp")
logical_and = _binary_function("logical_and")
logical_or = _binary_function("logical_or")
logical_xor = _binary_function("logical_xor")

# ---------------------------------------------------------------- numpy ufuncs on tensors

_UFUNC_NAMES = {"true_divide": "divide", "power": "pow", "absolute": "abs", "invert":
                "bitwise_invert", "left_shift": "bitwise_left_shift", "right_shift":
                "bitwise_right_shift", "arctan2": "atan2", "arcsin": "asin", "arccos": "acos",
                "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh",
                "mod": "remainder", "fmod": None}


def array_ufunc(ufunc: Any, method: str, inputs: tuple, kwargs: dict) -> Any:
    """`Tensor.__array_ufunc__`: numpy ufuncs that pykern has run as pykern ops."""
    if method != "__call__":
        return NotImplemented
    name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
    out = kwargs.pop("out", None)
    if kwargs or name is None:
        return NotImplemented
    if out is not None:
        out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if not isinstance(out, Tensor):
            return NotImplemented
    if len(inputs) == 1 and name in UNARY:
        return unary(name, inputs[0], out)
    if len(inputs) == 2 and name in BINARY_KINDS:
        return binary(name, inputs[0], inputs[1], out)
    return NotImplemented
